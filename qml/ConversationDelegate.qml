// One conversation in the sidebar: click to open, double-click (or F2) to rename inline, pin,
// and delete with undo.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Arbor

ItemDelegate {
    id: root
    objectName: "conversationDelegate"
    required property int index
    required property var conversationId
    required property string conversationTitle
    required property bool pinned
    property bool editing: false

    implicitHeight: 40
    highlighted: ChatController.conversationId === Number(root.conversationId)
    Accessible.name: qsTr("Conversation %1").arg(root.conversationTitle)
    onClicked: ChatController.openConversation(root.conversationId)
    onDoubleClicked: root.startRename()
    Keys.onPressed: (event) => {
        if (event.key === Qt.Key_F2) {
            root.startRename()
            event.accepted = true
        } else if (event.key === Qt.Key_Delete) {
            ChatController.deleteConversation(root.conversationId)
            event.accepted = true
        }
    }

    function startRename() {
        renameField.text = root.conversationTitle
        root.editing = true
        renameField.forceActiveFocus()
        renameField.selectAll()
    }
    function commitRename() {
        if (!root.editing)
            return
        root.editing = false
        ChatController.renameConversation(root.conversationId, renameField.text)
    }

    contentItem: Item {}

    RowLayout {
        anchors.fill: parent
        anchors.leftMargin: root.leftPadding
        anchors.rightMargin: root.rightPadding
        spacing: 4
        Label {
            objectName: "conversationTitleLabel"
            Layout.fillWidth: true
            visible: !root.editing
            text: root.conversationTitle
            elide: Text.ElideRight
        }
        TextField {
            id: renameField
            objectName: "renameField"
            Layout.fillWidth: true
            visible: root.editing
            selectByMouse: true
            Accessible.name: qsTr("New title for the conversation")
            onAccepted: root.commitRename()
            onActiveFocusChanged: if (!activeFocus) root.commitRename()
            Keys.onEscapePressed: root.editing = false
        }
        ToolButton {
            objectName: "renameButton"
            visible: root.hovered && !root.editing
            text: "✎"
            Accessible.name: qsTr("Rename conversation")
            ToolTip.visible: hovered
            ToolTip.text: qsTr("Rename (F2)")
            onClicked: root.startRename()
        }
        ToolButton {
            objectName: "pinButton"
            visible: root.hovered || root.pinned
            checkable: true
            checked: root.pinned
            text: root.pinned ? "★" : "☆"
            Accessible.name: root.pinned ? qsTr("Unpin conversation") : qsTr("Pin conversation")
            ToolTip.visible: hovered
            ToolTip.text: root.pinned ? qsTr("Unpin") : qsTr("Pin to the top")
            onClicked: ChatController.setPinned(root.conversationId, !root.pinned)
        }
        ToolButton {
            objectName: "deleteButton"
            visible: root.hovered || root.highlighted
            text: "✕"
            Accessible.name: qsTr("Delete conversation")
            ToolTip.visible: hovered
            ToolTip.text: qsTr("Delete (you can undo)")
            onClicked: ChatController.deleteConversation(root.conversationId)
        }
    }
}
